// Package shell reads a Bash command line into the commands it will run.
//
// Read parses the line with a real shell parser (mvdan.cc/sh/v3/syntax)
// and walks the whole tree: lists and pipelines, { } groups, subshells,
// if/for/while/until/case, functions (followed where they are called),
// command and process substitutions, here-documents and here-strings,
// assignments and environment prefixes, and the wrappers that run another
// program (timeout, nice, nohup, env, command, exec, xargs, sudo, stdbuf,
// ionice, time, busybox and others). Each Command carries its arguments
// with the quoting removed, its redirections, the directory it runs in as
// far as cd can be followed, and the environment assignments in force.
//
// Quoted text is text: `git commit -m 'feat(x): y'` is one command with
// four arguments. What cannot be told from the text alone is said, never
// guessed: a word built by an expansion ($VAR, $(…), globs, ~), eval and
// source, and an interpreter given code (-c, -e) or a script file are
// listed in Command.Unresolved or Script.Unresolved. The text of `sh -c`
// and of a here-document fed to a shell is read as commands in turn.
//
// It is a leaf: it imports nothing of ours.
package shell
