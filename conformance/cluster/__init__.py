"""What drivers leave on a cluster that outlives them, found and removed."""
