// Package confine runs a worker's shell command where it can change only
// what its role may change.
//
// # Two holds
//
// The operating system holds the command to its places: on Linux a
// Landlock domain (kernel 5.13 or later, unprivileged) lets the command
// and everything it starts write only into the task's worktree, the parts
// of the repository's git directory that committing the task's own branch
// needs (the worktree's own admin directory, the directory of task branch
// refs and their logs), a per-task directory for temporary files, caches
// and the command's new objects, and a few device files. Reading stays
// open. The main checkout, other worktrees, the object store,
// refs/ideate/*, notes, hooks and config cannot be written. From
// Landlock ABI 6 (Linux 6.12) the command may signal only what it started
// and reach no abstract socket of another process, so it cannot end the
// entry before the entry puts back what it changed; Mode says when the
// kernel is older. On macOS a generated sandbox-exec profile says
// the same (built, not run by our tests). Where neither exists, Mode says
// so and the caller falls back to reading the command (the weaker mode).
//
// The role's file classes are held by outcome, inside the worktree where
// the operating system lets the command write: before the command runs,
// Run notes what the role may not change (the files of the other class,
// init.md, the worktree's .git file and admin files, the branch and its
// neighbours); when it returns, every such change is undone — content
// restored from the index or a saved copy, new files removed, the index
// entry put back, commits that carry a forbidden change taken off the
// branch, other task branches put back, hard links and symlinks that lead
// out of the worktree or onto a forbidden file removed — and each undo is
// reported so that the worker is told.
//
// The workers' cache directory holds GOCACHE and XDG_CACHE_HOME: one for
// all the repository's workers (warm after the first task's build), apart
// from the user's, which the gates' own test runs use. A gate's run
// executes the workers' code with the user's build cache writable (the go
// command writes it), so gates never take a test result from go test's
// cache (their runs set -count=1); what is left to plant there is a build
// output under the content hash of its inputs. The module cache is
// read-only, so a worker cannot download modules (the plan's
// dependencies are there already). TMPDIR is the task's own.
//
// The environment loses what points git elsewhere (GIT_DIR, GIT_WORK_TREE,
// GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, GIT_CONFIG_COUNT and
// GIT_CONFIG_PARAMETERS, and every other GIT_ variable except the
// identity and the user's choice of configuration files) and what loads
// code into every program (LD_PRELOAD, BASH_ENV, ENV).
//
// The object store is read-only to the command because git trusts a
// loose object's name when it reads it: a file written under the name of
// a frozen test's blob would be what the next checkout of that test
// gives. The command's git writes new objects into a directory of its own
// (GIT_OBJECT_DIRECTORY, the store as its alternate); when the command
// returns, each loose object there whose content hashes to its name is
// copied into the store, and each pack is indexed again by git index-pack,
// which names objects by content. Anything else is reported and dropped.
package confine
