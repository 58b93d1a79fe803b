"""targets layer."""
