"""The floor under the app and the GPU worker: configuration and storage both need (the data folder, the Redis URL,
the SQLite / PostgreSQL connection). It imports neither ``app`` nor ``gpu_worker``."""
