# shellcheck shell=sh
# build-lib.sh - sourced by quickstart.sh, test.sh and pooling-table.sh:
# configure and build a Meson build folder quietly, but show what went wrong
# when it fails, and mend a folder a failed or interrupted setup left
# half-made.
#
#   gp_build DIR TARGET [MESON_SETUP_OPTIONS...]   (TARGET "" = everything)
#
# Returns 0 when built. On failure it prints the last lines of the log,
# keeps the whole log (DIR/build.log for the build; a temporary file for a
# setup that failed, as DIR is then removed), says what to try, and
# returns 1.

# Print the tail of a log and what to do, on stderr.
gp_build_failed() { # STEP LOG
    echo "gpupool: $1 failed; the last lines of $2:" >&2
    tail -n 40 "$2" | sed 's/^/    /' >&2
    case $1 in
    "meson setup"*)
        echo "gpupool: a missing library or tool? Run ./scripts/install-deps.sh" \
            "(Debian 12), then run this again." >&2 ;;
    *)
        echo "gpupool: the compiler's errors are above (whole log: $2)." >&2 ;;
    esac
}

gp_build() {
    dir=$1 target=$2
    shift 2
    # A folder without build.ninja or Meson's saved state is what a failed or
    # interrupted `meson setup` leaves: ninja cannot use it and a plain
    # `meson setup` refuses it. Remove it, but only if it is Meson's.
    if [ -d "$dir" ] && { [ ! -f "$dir/build.ninja" ] ||
        [ ! -f "$dir/meson-private/coredata.dat" ]; }; then
        if [ -d "$dir/meson-private" ] || [ -d "$dir/meson-logs" ] ||
            [ -z "$(ls -A "$dir")" ]; then
            echo "gpupool: $dir is a half-configured build folder;" \
                "configuring it afresh" >&2
            rm -rf "$dir"
        else
            echo "gpupool: $dir exists and is not a Meson build folder;" \
                "move it away or name another" >&2
            return 1
        fi
    fi
    if [ ! -d "$dir" ]; then
        log=$(mktemp "${TMPDIR:-/tmp}/gpupool-setup.XXXXXX")
        if ! meson setup "$dir" "$@" >"$log" 2>&1; then
            gp_build_failed "meson setup $dir" "$log"
            rm -rf "$dir" # half-made: the next run starts clean
            return 1
        fi
        rm -f "$log"
    fi
    log="$dir/build.log"
    # shellcheck disable=SC2086
    if ! ninja -C "$dir" $target >"$log" 2>&1; then
        gp_build_failed "the build in $dir" "$log"
        return 1
    fi
    rm -f "$log"
    return 0
}
