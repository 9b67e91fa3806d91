"""Model and GPU catalogs: architecture facts and hardware specs, each figure with its source."""
