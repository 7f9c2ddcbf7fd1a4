#!/usr/bin/env bash
# bench/bundle.sh BUILD OUT: the folder bench/device_check.sh carries to the GPU machine (`make bundle` calls it).
# OUT/bin: rootnet, librootnet-cuda.so (beside it, where rootnet loads it), tests/test_backend_ops and
# cuda-comm/dist_nccl_check (the collectives on one GPU), without their debug info; OUT/lib: every library they
# load that the GPU machine lacks (shared/NOTES-gpu.md: libdnnl,
# cairo and its font/X stack, libexif, libprotobuf-c, libjpeg.so.62), i.e. all that ldd resolves except the C and
# GCC runtimes, the libraries that machine has (libgomp, libjansson, libpng16, libz), and the CUDA libraries,
# which come from its PyTorch wheels (LD_LIBRARY_PATH). Fails when OUT would reach 48 MiB.
set -euo pipefail
build=$1 out=$2
limit=$((48 * 1024 * 1024))
for f in rootnet librootnet-cuda.so tests/test_backend_ops cuda-comm/dist_nccl_check; do
    [ -f "$build/$f" ] || { echo "bundle: $build/$f is missing (make bundle builds it; it needs nvcc and cuDNN)" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
for f in rootnet librootnet-cuda.so tests/test_backend_ops cuda-comm/dist_nccl_check; do strip --strip-debug -o "$out/bin/${f##*/}" "$build/$f"; done
there() {
    case "$1" in
    linux-vdso.so* | ld-linux* | libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libgcc_s.so* | \
        libstdc++.so* | libgomp.so* | libjansson.so* | libpng16.so* | libz.so* | \
        libcudnn* | libcublas* | libcudart* | libnccl* | libcuda.so* | libnvrtc* | libnvJitLink*) return 0 ;;
    esac
    return 1
}
ldd "$out/bin/rootnet" "$out/bin/test_backend_ops" "$out/bin/librootnet-cuda.so" "$out/bin/dist_nccl_check" > "$out/ldd.txt"
if grep -q 'not found' "$out/ldd.txt"; then
    echo "bundle: a library is not found here:" >&2; grep 'not found' "$out/ldd.txt" >&2; exit 1
fi
awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' "$out/ldd.txt" | sort -u > "$out/libs.txt"
while read -r name path; do
    there "$name" || cp -L "$path" "$out/lib/$name"
done < "$out/libs.txt"
rm -f "$out/ldd.txt" "$out/libs.txt"
bytes=$(du -sb "$out" | cut -f1)
echo "bundle: $out: $(ls "$out/bin" | tr '\n' ' ')+ $(ls "$out/lib" | wc -l) libraries ($(ls "$out/lib" | tr '\n' ' ')), $((bytes / 1048576)) MiB"
[ "$bytes" -lt "$limit" ] || { echo "bundle: $out is $bytes bytes, at or over the 48 MiB limit" >&2; exit 1; }
