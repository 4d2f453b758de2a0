"""One module per stage whose artifacts the report shows: `section(paths) -> markdown lines`."""
