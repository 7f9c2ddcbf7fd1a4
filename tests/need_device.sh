# Sourced by a test script that needs a device: `source tests/need_device.sh cpu`.
# Without that device built in (RN_DEVICES, set by tests/run.sh from $BUILD/devices)
# it prints "skipped: ..." and exits 77, which run.sh counts as a skip.
case " ${RN_DEVICES:-cpu ref} " in
*" $1 "*) ;;
*) echo "skipped: needs the $1 device, not built in (built in: ${RN_DEVICES:-})"; exit 77 ;;
esac
