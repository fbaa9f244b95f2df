// Package transcript summarizes a Claude Code session transcript: the JSONL
// file named by transcript_path (and agent_transcript_path) in hook payloads.
// Only package hooks imports it: its SessionEnd, PreCompact and
// SubagentStop handlers turn the Summary into a process record.
//
// # Format
//
// Each line is one JSON object. Only lines whose "type" is "user" or
// "assistant" are turns; others ("summary", "system", "attachment",
// "file-history-snapshot", "progress", …) are read and otherwise ignored.
// A turn carries message.content, either a string or an array of blocks:
//
//	{"type":"text","text":"…"}
//	{"type":"tool_use","id":"…","name":"Edit","input":{"file_path":"/abs/f.go",…}}
//	{"type":"tool_result","tool_use_id":"…","content":…}   // in "user" lines
//
// The host writes one "assistant" line per content block, and the answers of
// tools come back as "user" lines holding tool_result blocks, so the user
// and assistant counts are entry counts, as the hook contract defines them,
// not conversational turns. Summary.Prompts counts the user lines with real
// text instead.
//
// # Robustness and speed
//
// The file is written asynchronously and may end in a partial line. Blank
// lines are ignored; lines that are not one valid JSON object, or longer
// than Options.MaxLineBytes, are counted in BadLines and skipped; nothing in
// the content makes a scan fail. Lines are read through a 1 MiB buffer and
// walked once by a small validating scanner that accepts exactly the JSON
// encoding/json accepts, extracts only the fields above, and decodes strings
// only when the summary needs them, so large tool results cost a byte scan
// and no allocations.
package transcript
