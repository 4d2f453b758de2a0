"""The shared report sections, one module per stage: `section(paths) -> markdown lines`. A system's
section lives in its own package (`regula.<system>.report`); `regula.report.SECTIONS` lists them all."""
