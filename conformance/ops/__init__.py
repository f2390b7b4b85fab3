"""The operations a scenario is made of, and what a run of them records:
targets, verbs, scenarios, budgets, the history, and what the driver watches
while an op runs (threads, interrupts, Ray runtimes)."""
