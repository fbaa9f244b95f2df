// Package sprintview serves a read-only local web page of a repository's
// sprint: the waves and dependency graph of its tasks coloured by state,
// each task's attempts and verdicts, the board, the escalations with the
// retrospective's patterns and the latest records.
//
// # Reading only
//
// Every page is built from the same library calls the CLI uses (the plan
// loader, the execution log, the task manager, the board, the record) and
// nothing here writes a ref: the board is listed without its sweep of
// expired claims. Values from records, plans, specs and attempt files
// reach the page only through html/template, which escapes them.
//
// # Live
//
// /events is a server-sent event stream: the server compares the refs
// under refs/ideate/ and refs/notes/ideate every half second and sends
// "change" when they moved, whoever moved them (a gate, a worker, a sync).
// The page's small script then fetches itself again and swaps its main
// element; without JavaScript every view is a plain page.
package sprintview
