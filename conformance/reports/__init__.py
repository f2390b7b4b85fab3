"""Results of many runs: the JSON report, claims, known failures, the ruling
and the gate, the summary, shards and their merge, the matrix, drift against a
committed report."""
