set -x
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt; nvcc --version | tail -2 >> $OUT/device.txt; python3 --version >> $OUT/device.txt
OUT=$OUT timeout 560 bash bench/lab_device.sh > $OUT/lab_device.out 2>&1; echo "rc=$?" >> $OUT/lab_device.out
tail -40 $OUT/lab_device.out
