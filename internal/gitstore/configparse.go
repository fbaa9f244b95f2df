package gitstore

import "strings"

// parseConfig reads one git configuration file: `[section]`,
// `[section "subsection"]` and the old `[section.subsection]` headers,
// `key = value` and bare `key` (true) lines, `#` and `;` comments, double
// quotes, the escapes \n \t \b \\ \" and a backslash ending a line. A
// file git would refuse (a variable before any section, a bad header,
// an unterminated quote) is not used at all (ok false).
func parseConfig(data []byte) (vars []configVar, ok bool) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	section, sub, inSection := "", "", false
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		l := strings.TrimLeft(line, " \t")
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		if l[0] == '[' {
			end := strings.IndexByte(l, ']')
			if end < 0 {
				return nil, false
			}
			// A quoted subsection may hold ']'; find the closing quote first.
			if q := strings.IndexByte(l[:end], '"'); q >= 0 {
				j, name, good := q+1, "", false
				for ; j < len(l); j++ {
					c := l[j]
					if c == '\\' && j+1 < len(l) {
						j++
						name += string(l[j])
						continue
					}
					if c == '"' {
						good = true
						break
					}
					name += string(c)
				}
				if !good || j+1 >= len(l) || l[j+1] != ']' {
					return nil, false
				}
				section, sub = strings.TrimSpace(l[1:q]), name
				l = l[j+2:]
			} else {
				name := strings.TrimSpace(l[1:end])
				section, sub = name, ""
				if i := strings.IndexByte(name, '.'); i >= 0 {
					section, sub = name[:i], strings.ToLower(name[i+1:])
				}
				l = l[end+1:]
			}
			if section == "" {
				return nil, false
			}
			inSection = true
			l = strings.TrimLeft(l, " \t")
			if l == "" || l[0] == '#' || l[0] == ';' {
				continue
			}
			// A variable may follow the header on its line.
		}
		if !inSection {
			return nil, false
		}
		key, rest := l, ""
		if i := strings.IndexAny(l, "= \t#;"); i >= 0 {
			key, rest = l[:i], strings.TrimLeft(l[i:], " \t")
		}
		if key == "" {
			return nil, false
		}
		if rest == "" || rest[0] == '#' || rest[0] == ';' {
			vars = append(vars, configVar{section, sub, key, "true"})
			continue
		}
		if rest[0] != '=' {
			return nil, false
		}
		value, remaining, good := configValue(rest[1:], text)
		if !good {
			return nil, false
		}
		text = remaining
		vars = append(vars, configVar{section, sub, key, value})
	}
	return vars, true
}

// configValue reads a value starting at v (the rest of its line), taking
// more lines from next while a backslash ends one; it returns the value
// and what is left of next.
func configValue(v, next string) (string, string, bool) {
	var b strings.Builder
	quoted := false
	pending := "" // white space kept only if something follows it
	for {
		for i := 0; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '\\':
				if i+1 == len(v) { // continuation
					i = len(v)
					goto nextLine
				}
				i++
				b.WriteString(pending)
				pending = ""
				switch v[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'b':
					b.WriteByte('\b')
				case '\\', '"':
					b.WriteByte(v[i])
				default:
					return "", next, false
				}
			case c == '"':
				b.WriteString(pending)
				pending = ""
				quoted = !quoted
			case !quoted && (c == '#' || c == ';'):
				return strings.TrimLeft(b.String(), " \t"), next, true
			case !quoted && (c == ' ' || c == '\t'):
				if b.Len() > 0 {
					pending += string(c)
				}
			default:
				b.WriteString(pending)
				pending = ""
				b.WriteByte(c)
			}
		}
		if quoted {
			return "", next, false
		}
		return b.String(), next, true
	nextLine:
		if next == "" && quoted {
			return "", next, false
		}
		v = next
		if i := strings.IndexByte(next, '\n'); i >= 0 {
			v, next = next[:i], next[i+1:]
		} else {
			next = ""
		}
	}
}
