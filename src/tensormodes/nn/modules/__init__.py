"""The layers of ``tensormodes.nn``: ``Module`` and the modules built on it (re-exported by ``nn``).

>>> import tensormodes as tm
>>> tm.nn.modules.Linear is tm.nn.Linear
True
"""

from .activation import (
                         CELU,
                         ELU,
                         GELU,
                         GLU,
                         SELU,
                         Hardshrink,
                         Hardsigmoid,
                         Hardswish,
                         Hardtanh,
                         LeakyReLU,
                         LogSigmoid,
                         LogSoftmax,
                         Mish,
                         PReLU,
                         ReLU,
                         ReLU6,
                         RReLU,
                         Sigmoid,
                         SiLU,
                         Softmax,
                         Softmax2d,
                         Softmin,
                         Softplus,
                         Softshrink,
                         Softsign,
                         Tanh,
                         Tanhshrink,
                         Threshold,
)
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .attention import MultiheadAttention
from .container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .lazy import (
                         LazyBatchNorm1d,
                         LazyBatchNorm2d,
                         LazyBatchNorm3d,
                         LazyConv1d,
                         LazyConv2d,
                         LazyConv3d,
                         LazyConvTranspose1d,
                         LazyConvTranspose2d,
                         LazyConvTranspose3d,
                         LazyInstanceNorm1d,
                         LazyInstanceNorm2d,
                         LazyInstanceNorm3d,
                         LazyLinear,
                         LazyModuleMixin,
)
from .linear import Bilinear, Identity, Linear
from .loss import (
                         BCELoss,
                         BCEWithLogitsLoss,
                         CosineEmbeddingLoss,
                         CrossEntropyLoss,
                         CTCLoss,
                         GaussianNLLLoss,
                         HingeEmbeddingLoss,
                         HuberLoss,
                         KLDivLoss,
                         L1Loss,
                         MarginRankingLoss,
                         MSELoss,
                         MultiLabelMarginLoss,
                         MultiLabelSoftMarginLoss,
                         MultiMarginLoss,
                         NLLLoss,
                         NLLLoss2d,
                         PoissonNLLLoss,
                         SmoothL1Loss,
                         SoftMarginLoss,
                         TripletMarginLoss,
                         TripletMarginWithDistanceLoss,
)
from .module import Module
from .normalization import (
                         BatchNorm1d,
                         BatchNorm2d,
                         BatchNorm3d,
                         GroupNorm,
                         InstanceNorm1d,
                         InstanceNorm2d,
                         InstanceNorm3d,
                         LayerNorm,
                         LocalResponseNorm,
                         RMSNorm,
                         SyncBatchNorm,
)
from .padding import (
                         CircularPad1d,
                         CircularPad2d,
                         CircularPad3d,
                         ConstantPad1d,
                         ConstantPad2d,
                         ConstantPad3d,
                         ReflectionPad1d,
                         ReflectionPad2d,
                         ReflectionPad3d,
                         ReplicationPad1d,
                         ReplicationPad2d,
                         ReplicationPad3d,
                         ZeroPad1d,
                         ZeroPad2d,
                         ZeroPad3d,
)
from .pooling import (
                         AdaptiveAvgPool1d,
                         AdaptiveAvgPool2d,
                         AdaptiveAvgPool3d,
                         AdaptiveMaxPool1d,
                         AdaptiveMaxPool2d,
                         AdaptiveMaxPool3d,
                         AvgPool1d,
                         AvgPool2d,
                         AvgPool3d,
                         LPPool1d,
                         LPPool2d,
                         LPPool3d,
                         MaxPool1d,
                         MaxPool2d,
                         MaxPool3d,
                         MaxUnpool1d,
                         MaxUnpool2d,
                         MaxUnpool3d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .shuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle
from .sparse import Embedding, EmbeddingBag
from .transformer import (
                         Transformer,
                         TransformerDecoder,
                         TransformerDecoderLayer,
                         TransformerEncoder,
                         TransformerEncoderLayer,
)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Module", "Identity", "Linear", "Bilinear", "Flatten", "Unflatten", "Sequential", "ModuleList",
           "ModuleDict", "ParameterList", "ParameterDict", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
           "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm",
           "InstanceNorm2d",
           "Embedding", "EmbeddingBag", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout", "Upsample", "UpsamplingNearest2d",
           "UpsamplingBilinear2d", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell",
           "GRUCell", "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder", "Transformer",
           "Threshold", "ReLU", "Hardtanh", "ReLU6", "Sigmoid", "Tanh", "Softmax", "Softmin",
           "LogSoftmax", "ELU", "SELU", "CELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus",
           "Softsign", "Tanhshrink", "PReLU", "Hardsigmoid", "Hardswish", "SiLU", "Mish", "L1Loss", "NLLLoss",
           "NLLLoss2d", "Container", "AdaptiveLogSoftmaxWithLoss",
           "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss",
           "HingeEmbeddingLoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "CrossEntropyLoss",
           "CosineEmbeddingLoss", "MarginRankingLoss", "TripletMarginLoss",
           "MultiMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "TripletMarginWithDistanceLoss",
           "Softshrink", "RReLU", "Softmax2d", "RMSNorm", "BatchNorm3d",
           "SyncBatchNorm", "InstanceNorm1d", "Conv3d", "ConvTranspose3d",
           "MaxPool3d", "AvgPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "LocalResponseNorm", "CTCLoss",
           "LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
           "InstanceNorm3d", "Fold", "Unfold", "PairwiseDistance", "CosineSimilarity",
           "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
           "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]
