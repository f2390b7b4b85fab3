"""Running one scenario: the isolated driver (and its peer), the parent that
starts it and turns the run into a result, a rerun alone, the CPU pressure
meanwhile, the throughput benchmark."""
