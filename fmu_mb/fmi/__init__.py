"""FMI 2.0 co-simulation layer: interface tables, the generic slave, the FMU builder."""
