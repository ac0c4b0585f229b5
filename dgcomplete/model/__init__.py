"""The network, its config, checkpoint loading and tokenizer."""

from .config import ConfigError, ModelConfig
from .loader import CheckpointError, LoadedModel, SamplerDefaults, load_model, save_checkpoint, weight_files
from .network import DiffusionGemma, KVCache, ListCache
from .tokenizer import Tokenizer

__all__ = [
    "CheckpointError", "ConfigError", "DiffusionGemma", "KVCache", "ListCache", "LoadedModel", "ModelConfig",
    "SamplerDefaults", "Tokenizer", "load_model", "save_checkpoint", "weight_files",
]
