# storm.sh MODE - shell programs: execs (a loop of external commands and
# command substitutions), pipes, traps and subshells.
case "$1" in
exec)
	i=0
	while [ $i -lt 150 ]; do
		/bin/true
		x=$(echo $i)
		i=$((i + 1))
	done
	echo "loop done $x"
	seq 1 20000 | sort -n | tail -n 1
	sh -c 'exit 7'; echo "sub exit $?"
	;;
trap)
	trap 'echo got USR1' USR1
	trap 'echo bye' EXIT
	kill -USR1 $$
	( kill -TERM $$ ) ; echo "after TERM? no trap, should not print"
	;;
*) exit 2 ;;
esac
