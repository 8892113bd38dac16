"""Independent references used by the tests: Pinocchio models built from our
descriptions, and a slow transcription of the papers' trace formulas."""
