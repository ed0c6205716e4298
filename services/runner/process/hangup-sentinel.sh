# Hangs up a terminal runner's pipe terminals once the runner is gone, as the kernel hangs up a
# pseudoterminal whose master closes: each terminal's process group gets SIGHUP, then SIGCONT (so a
# stopped member wakes to take it). What ignores SIGHUP (nohup) or left the group (setsid) lives on.
#
# Standard input comes from the runner, one line per change:
#   +PGID START  a terminal's process group, and the start time of its leader (field 22 of
#                /proc/PGID/stat, clock ticks since boot; 0 when unknown)
#   -PGID        that group is gone or no longer the runner's concern
# End of input means the runner exited or died: the groups still listed are hung up, then this exits.
#
# A group is signalled only while it can still be the terminal's: when a process with the group's id
# exists, it must be the very leader that was listed (same start time); otherwise the number was
# given to another process, which the kernel only does once the group is empty. A group whose leader
# has exited is signalled as long as it exists: the runner drops it from the list as soon as it sees
# it empty (within a second), so only a number recycled within that second could be hit.

trap '' HUP INT PIPE
groups=' '
while IFS= read -r line; do
  id=${line#[+-]}
  id=${id%% *}
  case $id in '' | *[!0-9]*) continue ;; esac
  case $groups in
    *" $id:"*)
      head=${groups%%" $id:"*}
      tail=${groups#*" $id:"}
      groups="$head ${tail#* }"
      ;;
  esac
  case $line in
    +*)
      start=${line#* }
      case $start in '' | *[!0-9]*) start=0 ;; esac
      groups="$groups$id:$start "
      ;;
  esac
done

set -f
for entry in $groups; do
  id=${entry%%:*}
  start=${entry#*:}
  if [ "$start" != 0 ] && read -r stat 2>/dev/null </proc/"$id"/stat; then
    # The fields after the command name (which may hold spaces and parentheses): state is the
    # first of them, the start time the twentieth.
    set -- ${stat##*) }
    shift 19
    [ "$1" = "$start" ] || continue
  fi
  kill -s HUP -- "-$id" 2>/dev/null
  kill -s CONT -- "-$id" 2>/dev/null
done
exit 0
