# shellcheck shell=sh
# lib.sh - sourced by the daemon's shell tests (daemon.sh, idle.sh,
# live.sh, torch.sh), which set $exe to the gpupool program.

# it_wait_up LOG: wait (10 s at most) until the daemon answers `gpupool
# queue`; if it does not, print LOG and end the test with status 1.
it_wait_up() {
    it_i=0
    while ! "$exe" queue >/dev/null 2>&1; do
        it_i=$((it_i + 1))
        if [ $it_i -gt 100 ]; then
            echo "FAIL: the daemon did not come up"
            cat "$1"
            exit 1
        fi
        sleep 0.1
    done
}
