"""regula."""
