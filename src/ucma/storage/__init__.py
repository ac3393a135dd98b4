"""Storage backends behind the ABCs in ``ucma.storage.base``."""
