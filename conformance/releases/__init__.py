"""The suite over the library's releases: cached environments, the verdict
matrix over releases, the bisection."""
