package corecmd

import (
	"context"
	"reflect"
	"strconv"
	"strings"
)

// Building kong's model and parsing with it were 9 % of a CLI record
// append's samples (perf, 300 calls) even on the narrowed tree (grammar).
// FastParse fills in the command an argument list names without kong when
// the list is plain, and leaves everything else to kong, which then
// parses, validates and reports errors as before:
//
//   - root flags -C DIR, --chdir DIR or --chdir=DIR, and only before the
//     command words;
//   - command words down to a command with no subcommands and no
//     positional arguments;
//   - then only --name=value, --name value (for a flag that takes a
//     value: the next argument, whatever it is, as joinDashValues has kong
//     read it) and --name (a bool), each flag at most once;
//   - flags of type string, bool, int and int64 (and pointers to them),
//     named by a name tag or by a field name of plain words; a flag of any
//     other type (a list, a duration), another tag kong would act on, or
//     a missing required flag sends the line to kong.
//
// root is the command tree's type (the full CLI, or the lean binary's
// part of it). TestFastParse_SameAsKong parses generated lines of every
// command both ways and compares what each fills in.
func FastParse(root reflect.Type, args []string) (cmd Runner, path, chdir string, ok bool) {
	i := 0
	for i < len(args) {
		switch a := args[i]; {
		case a == "-C" || a == "--chdir":
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				return nil, "", "", false // kong reads "-C -x" as "=-x"
			}
			chdir = args[i+1]
			i += 2
			continue
		case strings.HasPrefix(a, "--chdir="):
			chdir = a[len("--chdir="):]
			i++
			continue
		}
		break
	}
	t := root
	var words []string
	for i < len(args) && !strings.HasPrefix(args[i], "-") {
		f, found := CommandField(t, args[i])
		if !found || len(words) > 0 && groupFlags(t) {
			return nil, "", "", false
		}
		words = append(words, args[i])
		t = f.Type
		i++
	}
	if len(words) == 0 || t.Kind() != reflect.Struct || HasCommands(t) {
		return nil, "", "", false
	}
	flags, plain := PlainFlags(t)
	if !plain {
		return nil, "", "", false
	}
	v := reflect.New(t)
	seen := map[string]bool{}
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") || a == "--" {
			return nil, "", "", false
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		fl, known := flags[name]
		if !known || seen[name] {
			return nil, "", "", false
		}
		seen[name] = true
		if fl.Kind == reflect.Bool {
			if hasValue {
				return nil, "", "", false
			}
			value = "true"
		} else if !hasValue {
			if i+1 >= len(args) {
				return nil, "", "", false
			}
			i++
			value = args[i]
		}
		if !fl.set(v.Elem(), value) {
			return nil, "", "", false
		}
	}
	for name, fl := range flags {
		if seen[name] {
			continue
		}
		if fl.Required {
			return nil, "", "", false
		}
		if fl.Def != "" && !fl.set(v.Elem(), fl.Def) {
			return nil, "", "", false
		}
	}
	r, isRunner := v.Interface().(Runner)
	if !isRunner {
		return nil, "", "", false
	}
	return r, strings.Join(words, " "), chdir, true
}

// Runner is a command's Run method as kong would call it with run's
// bindings.
type Runner interface {
	Run(ctx context.Context, env *Env) error
}

// CommandField is t's command field named word.
func CommandField(t reflect.Type, word string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); isCmd && CmdName(f) == word {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// PlainFlag is one flag FastParse can fill in.
type PlainFlag struct {
	Index    []int // the field, through embedded structs
	Kind     reflect.Kind
	Ptr      bool
	Required bool
	Def      string
	Sep      rune // a []string flag: kong splits its value on Sep
}

// set parses value into the flag's field of cmd as kong's mappers do
// (ints through strconv.ParseInt with base 0).
func (f PlainFlag) set(cmd reflect.Value, value string) bool {
	fv := cmd.FieldByIndex(f.Index)
	target := fv
	if f.Ptr {
		target = reflect.New(fv.Type().Elem()).Elem()
	}
	switch f.Kind {
	case reflect.String:
		target.SetString(value)
	case reflect.Bool:
		target.SetBool(true)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(value, 0, target.Type().Bits())
		if err != nil {
			return false
		}
		target.SetInt(n)
	case reflect.Slice:
		parts := splitEscaped(value, f.Sep)
		if parts == nil {
			parts = []string{} // given, even empty: kong's list is not nil
		}
		target.Set(reflect.ValueOf(parts))
	default:
		return false
	}
	if f.Ptr {
		fv.Set(target.Addr())
	}
	return true
}

// kongActs are the tags that change what kong fills in beyond a flag's
// name, requiredness and default; a command using one goes to kong.
var kongActs = []string{"arg", "cmd", "enum", "sep", "mapsep", "env", "type", "xor", "and", "short", "aliases", "negatable", "kong", "embed", "prefix", "passthrough", "hidden"}

// PlainFlags lists the flags of command type t by name; plain is false
// when t has anything FastParse does not fill in as kong does.
func PlainFlags(t reflect.Type) (map[string]PlainFlag, bool) {
	flags := map[string]PlainFlag{}
	var walk func(t reflect.Type, index []int) bool
	walk = func(t reflect.Type, index []int) bool {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			if f.Anonymous {
				if f.Type.Kind() != reflect.Struct || f.Tag != "" || !walk(f.Type, idx) {
					return false
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			var sep rune
			for _, k := range kongActs {
				v, has := f.Tag.Lookup(k)
				if !has {
					continue
				}
				if r := []rune(v); k == "sep" && f.Type == stringsType && len(r) == 1 && r[0] != '\\' {
					sep = r[0] // a list of strings split on one character: splitEscaped
					continue
				}
				return false
			}
			ft, ptr := f.Type, false
			if ft.Kind() == reflect.Pointer {
				ft, ptr = ft.Elem(), true
			}
			if ft.PkgPath() != "" { // a named type: kong may map it its own way
				return false
			}
			switch ft.Kind() {
			case reflect.String, reflect.Bool, reflect.Int, reflect.Int64:
			case reflect.Slice:
				if sep == 0 {
					return false
				}
			default:
				return false
			}
			name := f.Tag.Get("name")
			if name == "" {
				n, ok := KebabName(f.Name)
				if !ok {
					return false // kong splits the words its own way
				}
				name = n
			}
			def := f.Tag.Get("default")
			_, required := f.Tag.Lookup("required")
			if strings.Contains(def, "${") || (def != "" && ft.Kind() == reflect.Bool) || (sep != 0 && (def != "" || required)) {
				return false
			}
			if _, dup := flags[name]; dup {
				return false
			}
			flags[name] = PlainFlag{Index: idx, Kind: ft.Kind(), Ptr: ptr, Required: required, Def: def, Sep: sep}
		}
		return true
	}
	return flags, walk(t, nil)
}

var stringsType = reflect.TypeFor[[]string]()

// splitEscaped splits a list flag's value as kong does: on sep, where a
// backslash before sep makes it part of the element (a backslash before
// anything else stays, as does one at the very end); an empty element
// between two separators is kept, a trailing empty one is not, and an
// empty value has no elements.
func splitEscaped(s string, sep rune) []string {
	var out []string
	var elem strings.Builder
	escaped := false
	for i, r := range s {
		switch {
		case escaped:
			if r != sep {
				elem.WriteByte('\\')
			}
			elem.WriteRune(r)
			escaped = false
		case r == '\\' && i < len(s)-1:
			escaped = true
		case r == sep:
			out = append(out, elem.String())
			elem.Reset()
		default:
			elem.WriteRune(r)
		}
	}
	if elem.Len() > 0 {
		out = append(out, elem.String())
	}
	return out
}

// KebabName is kong's name for a flag whose field name is words of one
// capital letter and then lower-case letters (IncludeContent:
// include-content); ok is false for any other field name (acronyms,
// digits), which kong splits its own way.
func KebabName(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			if i+1 >= len(s) || s[i+1] < 'a' || s[i+1] > 'z' {
				return "", false
			}
			if i > 0 {
				b.WriteByte('-')
			}
			b.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z' && i > 0:
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// groupFlags reports whether a command group declares flags of its own
// (kong would take them anywhere after the group's word).
func groupFlags(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); !isCmd && (f.IsExported() || f.Anonymous) {
			return true
		}
	}
	return false
}

// CommandWords returns the leading non-flag arguments, skipping the values
// of the root's flags that take one (-C DIR, --chdir DIR).
func CommandWords(args []string) []string {
	var words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "--chdir":
			i++
		case strings.HasPrefix(a, "-"):
			if len(words) == 0 {
				continue
			}
			return words
		default:
			words = append(words, a)
		}
	}
	return words
}

// VersionOnly reports whether args are the version flag and root flags
// that take a value (-C DIR), nothing else: run answers those without
// kong, whose model even of the root alone was about half of that call's
// CPU (perf; issue 19's start-up figure).
func VersionOnly(args []string) bool {
	seen := false
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--version":
			seen = true
		case "-C", "--chdir":
			i++
		default:
			return false
		}
	}
	return seen
}

// CmdName is kong's name for a command field: its name tag, or the field
// name in kebab case (KebabName); "" when kong would split the field name
// its own way, so that nothing matches it and kong gets the whole tree.
func CmdName(f reflect.StructField) string {
	if n := f.Tag.Get("name"); n != "" {
		return n
	}
	n, _ := KebabName(f.Name)
	return n
}

// HasCommands reports whether struct type t has command fields.
func HasCommands(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		if _, ok := t.Field(i).Tag.Lookup("cmd"); ok {
			return true
		}
	}
	return false
}
