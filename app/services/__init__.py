"""Service layer: the one place where JSON and HTML routes call into algebra/ and gpu_worker/."""
