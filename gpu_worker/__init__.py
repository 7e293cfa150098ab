"""The GPU lab's worker: templated CUDA kernels, their build, run, telemetry and the job queue.

Modules that need nothing beyond the standard library (``patterns``, ``build``, ``run``, ``benches``, ``telemetry``
with NVML optional) are usable by the stand-alone scripts under ``bench/``; ``schemas``, ``registry``, ``store``,
``redis_store`` and ``service`` add pydantic, the job store and its lease queue (SQL or Redis Streams) for the web
app and ``layoutlab worker``; ``gpus`` (choosing, pinning, locking and watching GPUs) and ``multi`` (one worker process
per GPU) are what ``layoutlab worker --gpus`` runs.
"""
