#!/bin/sh
# push-scaling.sh: where the time of one `git push` of N refs goes, the
# push teamsync.Sync makes when N item refs changed (gitstore.Push: one
# explicit <new>:<ref> refspec and one --force-with-lease=<ref>:<old> per
# ref, --atomic). Synthetic refs, so only git's own cost is measured:
#
#   client       `git push --dry-run` of the same arguments (ref matching
#                and lease checks; nothing is sent or written)
#   no leases    the same without the --force-with-lease options
#   push         the real push to an empty bare remote (git's default
#                core.fsync: every new loose ref on the remote is fsynced)
#   push nofsync the same with core.fsync=none on the remote
#   shadow       `--dry-run` from a ref-less GIT_DIR that borrows the
#                objects (objects/info/alternates): the client's matching
#                cost without the repository's own refs
#   glob         `--dry-run` of one glob refspec from a scratch namespace
#                with the same per-ref leases
#   pushall      (HOLD mode) what gitstore.PushAll runs now: one glob
#                refspec over refs/ideate/*, --force-with-lease taken from
#                the tracking refs; "dry" with --dry-run
#
# The repository holds N item refs and N remote-tracking copies (as a
# clone that has synced does), packed.
#
#   sh bench/syncbench/push-scaling.sh 1000 2000 4000
set -eu
W=${SYNCBENCH_WORK:-/work/tmp-syncbench-scaling}
rm -rf "$W"; mkdir -p "$W"; trap 'rm -rf "$W"' EXIT
cd "$W"
git init -q repo; git -C repo commit -q --allow-empty -m x
H=$(git -C repo rev-parse HEAD)
t() { # label cmd...: wall and user+sys seconds
	l=$1; shift
	/usr/bin/time -f "%e %U %S" -o "$W/t" "$@" >/dev/null 2>"$W/err" || { echo "$l FAILED: $(head -c 300 "$W/err")"; return 0; }
	awk -v l="$l" '{printf "  %-14s wall %7.2fs  cpu %7.2fs\n", l, $1, $2+$3}' "$W/t"
}
if [ -z "${HOLD:-}" ]; then
for N in "$@"; do
	echo "N=$N refs pushed; repository holds $((2 * N)) refs"
	git -C repo for-each-ref --format='delete %(refname)' refs/ideate refs/ideate-remotes refs/push | git -C repo update-ref --stdin
	seq 1 "$N" | awk -v h="$H" '{i=sprintf("%026d",$1); print "create refs/ideate/board/items/" i " " h; print "create refs/ideate-remotes/origin/ideate/board/items/" i " " h; print "create refs/push/" i " " h}' | git -C repo update-ref --stdin
	git -C repo pack-refs --all
	seq 1 "$N" | awk -v h="$H" '{i=sprintf("%026d",$1); print "--force-with-lease=refs/ideate/board/items/" i ":"}' > leases
	seq 1 "$N" | awk -v h="$H" '{i=sprintf("%026d",$1); print h ":refs/ideate/board/items/" i}' > specs
	rm -rf r.git shadow.git; git init -q --bare r.git; git -C repo push -q ../r.git HEAD:refs/heads/main
	# shellcheck disable=SC2046
	t client git -C repo push --dry-run --porcelain --atomic $(cat leases) ../r.git $(cat specs)
	t "no leases" git -C repo push --dry-run --porcelain --atomic ../r.git $(cat specs)
	t push git -C repo push --porcelain --atomic $(cat leases) ../r.git $(cat specs)
	rm -rf r.git; git init -q --bare r.git; git -C r.git config core.fsync none; git -C repo push -q ../r.git HEAD:refs/heads/main
	t "push nofsync" git -C repo push --porcelain --atomic $(cat leases) ../r.git $(cat specs)
	rm -rf r.git; git init -q --bare r.git; git -C repo push -q ../r.git HEAD:refs/heads/main
	git init -q --bare shadow.git; echo "$W/repo/.git/objects" > shadow.git/objects/info/alternates
	t shadow git --git-dir="$W/shadow.git" push --dry-run --porcelain --atomic $(cat leases) "$W/r.git" $(cat specs)
	t glob git -C repo push --dry-run --porcelain --atomic $(cat leases) ../r.git 'refs/push/*:refs/ideate/board/items/*'
done
fi

# With HOLD set (e.g. HOLD=10000 sh push-scaling.sh 100): the remote already
# holds HOLD item refs, the repository HOLD items and HOLD tracking copies,
# and the push moves the first N of them (a sync after N local claims).
if [ -n "${HOLD:-}" ]; then
	H2=$(git -C repo commit-tree "$H^{tree}" -p "$H" -m y)
	seq 1 "$HOLD" | awk -v h="$H" '{i=sprintf("%026d",$1); print "create refs/ideate/board/items/" i " " h; print "create refs/ideate-remotes/origin/ideate/board/items/" i " " h}' | git -C repo update-ref --stdin
	git -C repo pack-refs --all
	rm -rf r.git; git init -q --bare r.git
	git -C repo push -q ../r.git HEAD:refs/heads/main 'refs/ideate/*:refs/ideate/*'
	git -C r.git pack-refs --all
	for N in "$@"; do
		echo "N=$N of $HOLD item refs pushed; repository holds $((2 * HOLD)) refs, the remote $HOLD (packed)"
		seq 1 "$N" | awk -v h="$H" '{i=sprintf("%026d",$1); print "--force-with-lease=refs/ideate/board/items/" i ":" h}' > leases
		seq 1 "$N" | awk -v h="$H2" '{i=sprintf("%026d",$1); print h ":refs/ideate/board/items/" i}' > specs
		# shellcheck disable=SC2046
		t client git -C repo push --dry-run --porcelain --atomic $(cat leases) ../r.git $(cat specs)
		t "no leases" git -C repo push --dry-run --porcelain --atomic ../r.git $(cat specs)
		git init -q --bare shadow.git 2>/dev/null; echo "$W/repo/.git/objects" > shadow.git/objects/info/alternates
		t shadow git --git-dir="$W/shadow.git" push --dry-run --porcelain --atomic $(cat leases) "$W/r.git" $(cat specs)
		t push git -C repo push --porcelain --atomic $(cat leases) ../r.git $(cat specs)
		seq 1 "$N" | awk -v h="$H" '{i=sprintf("%026d",$1); print "update refs/ideate/board/items/" i " " h}' | git -C r.git update-ref --stdin
		# gitstore.PushAll: one glob refspec, leases from the tracking refs.
		seq 1 "$N" | awk -v h="$H2" '{i=sprintf("%026d",$1); print "update refs/ideate/board/items/" i " " h}' | git -C repo update-ref --stdin
		t "pushall dry" git -C repo -c remote.ideate-sync.url="$W/r.git" -c remote.ideate-sync.fetch='+refs/ideate/*:refs/ideate-remotes/origin/ideate/*' \
			push --dry-run --porcelain --no-verify --atomic --force-with-lease ideate-sync 'refs/ideate/*:refs/ideate/*'
		t "pushall" git -C repo -c remote.ideate-sync.url="$W/r.git" -c remote.ideate-sync.fetch='+refs/ideate/*:refs/ideate-remotes/origin/ideate/*' \
			push --porcelain --no-verify --atomic --force-with-lease ideate-sync 'refs/ideate/*:refs/ideate/*'
		echo "    pushall moved $(git -C r.git for-each-ref --format=x --points-at "$H2" refs/ideate | wc -l) refs on the remote"
		seq 1 "$N" | awk -v h="$H" '{i=sprintf("%026d",$1); print "update refs/ideate/board/items/" i " " h; print "update refs/ideate-remotes/origin/ideate/board/items/" i " " h}' | git -C repo update-ref --stdin
		# put the remote back for the next N
		seq 1 "$N" | awk -v h="$H" '{i=sprintf("%026d",$1); print "update refs/ideate/board/items/" i " " h}' | git -C r.git update-ref --stdin
	done
fi
