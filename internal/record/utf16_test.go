package record_test

import (
	"math/rand/v2"
	"testing"
	"unicode/utf16"

	"github.com/ideate/git-ideate/internal/record"
)

// UTF16Len counts what JavaScript's length counts: one unit per rune of
// the BMP, two above it, one per byte that is not UTF-8 (read as U+FFFD).
func TestUTF16Len(t *testing.T) {
	parts := []string{"", "a", "\x00", "\x7f", "é", "日本", "😀", "\uFFFD", "\uFFFF", "\U00010000", "\U0010FFFF",
		"\xff", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\u2028"}
	rnd := rand.New(rand.NewPCG(19, 16))
	for i := 0; i < 5000; i++ {
		var s string
		for n := rnd.IntN(6); n > 0; n-- {
			s += parts[rnd.IntN(len(parts))]
		}
		if got, want := record.UTF16Len(s), len(utf16.Encode([]rune(s))); got != want {
			t.Fatalf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
	}
}
