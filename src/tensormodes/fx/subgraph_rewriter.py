replace_pattern = None
