"""dgcomplete: a code-completion language server with a resident text-diffusion model."""

__version__ = "0.1.0"
