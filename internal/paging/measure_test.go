package paging

import (
	"math"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
)

type measureSource struct {
	CapturePoint string `json:"capture_point"`
	SessionID    string `json:"session_id"`
}

type measureRef struct {
	Rel string `json:"rel"`
	ID  string `json:"id"`
}

type measureRow struct {
	ID            string        `json:"id"`
	Source        measureSource `json:"source"`
	References    []measureRef  `json:"references"`
	ReferencedBy  []measureRef  `json:"referenced_by"`
	ContentLength int           `json:"content_length"`
}

// TestMeasures checks both measures against figures produced by Node's
// JSON.stringify(v).length and, for the pretty form,
// s=JSON.stringify(v,null,2); s.length + 4*s.split("\n").length + 2.
func TestMeasures(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		compact int
		pretty  int
	}{
		{"ASCII_String", "abc", 5, 11},
		{"ASCII_Struct", struct {
			ID string `json:"id"`
			N  int    `json:"n"`
		}{"01J", 3}, 18, 45},
		{"NonBMP_EmojiCountsTwo", "😀", 4, 10},
		{"NonBMP_InStruct", struct {
			Claim string `json:"claim"`
			ID    string `json:"id"`
		}{"ship it 🚀🚀", "x"}, 33, 60},
		{"BMP_AccentCountsOne", "é", 3, 9},
		{"HTML_NotEscaped", `<a href="x">&amp;</a>`, 25, 31},
		{"LineSeparators_CountOne", "\u2028\u2029", 4, 10},
		{"Newline_EscapedTwo", "a\nb", 6, 12},
		{"Control_EscapedSix", "\x01", 8, 14},
		{"BackspaceFormFeed_EscapedTwo", "\b\f", 6, 12},
		{"DEL_Raw", "\x7f", 3, 9},
		{"LiteralBackslashU2028_NotAnEscape", `\u2028`, 9, 15},
		{"ReplacementChar_CountsOne", "\ufffd", 3, 9},
		{"InvalidUTF8_CountsAsReplacement", "\xff", 3, 9},
		{"Nil_Null", nil, 4, 10},
		{"EmptySlice", []string{}, 2, 8},
		{"EmptyMap", map[string]int{}, 2, 8},
		{"Floats_ES6Form", []float64{1e21, 0.1, 1e-7}, 16, 48},
		{"Nested_RecordRow", measureRow{
			ID:            "01J",
			Source:        measureSource{CapturePoint: "mcp:record_append", SessionID: "s"},
			References:    []measureRef{},
			ReferencedBy:  []measureRef{{Rel: "supersedes", ID: "01K"}},
			ContentLength: 12,
		}, 162, 289},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := CompactLen(tc.in)
			if err != nil {
				t.Fatalf("CompactLen: %v", err)
			}
			if c != tc.compact {
				t.Errorf("CompactLen = %d, want %d", c, tc.compact)
			}
			p, err := PrettyLen(tc.in)
			if err != nil {
				t.Fatalf("PrettyLen: %v", err)
			}
			if p != tc.pretty {
				t.Errorf("PrettyLen = %d, want %d", p, tc.pretty)
			}
		})
	}
}

func TestMeasures_Unserializable(t *testing.T) {
	tests := []struct {
		name string
		in   any
	}{
		{"Channel", make(chan int)},
		{"NaN", math.NaN()},
		{"Func", func() {}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := CompactLen(tc.in); !apperr.Is(err, apperr.Internal) {
				t.Errorf("CompactLen error = %v, want INTERNAL", err)
			}
			if _, err := PrettyLen(tc.in); !apperr.Is(err, apperr.Internal) {
				t.Errorf("PrettyLen error = %v, want INTERNAL", err)
			}
		})
	}
}

func TestJSUTF16Len(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"Empty", "", 0},
		{"ASCII", `"ab"`, 4},
		{"Escape2028_One", `"\u2028"`, 3},
		{"EscapeUpperHex_One", `"\u202A"`, 3},
		{"EscapeControl_Six", `"\u001f"`, 8},
		{"EscapedBackslashThenU", `"\\u2028"`, 9},
		{"TruncatedUEscape_Raw", `\u20`, 4},
		{"BadHexEscape_Six", `\uzzzz`, 6},
		{"LoneBackslashAtEnd", `\`, 1},
		{"NonBMP_Two", "😀", 2},
		{"InvalidByte_One", "\xff", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsUTF16Len([]byte(tc.in)); got != tc.want {
				t.Fatalf("jsUTF16Len(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}
