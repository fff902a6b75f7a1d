package templates

import "testing"

// TestIsStatusLanguage: status language is told by its shape (seed 000: "X COMPLETE / X done
// / X partially complete"), not by a word: a directive that uses the words stays a directive.
func TestIsStatusLanguage(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		// status
		{"T3 done", true},
		{"- T3 done", true},
		{"Ledger backfill COMPLETE", true},
		{"Phase 2 COMPLETE — phase 3 starts Monday", true},
		{"M2 partially complete", true},
		{"Shadow reads: partially complete (EU only)", true},
		{"Backfill is done.", true},
		{"Invoices migration — done", true},
		{"T3 done, T4 next", true},
		{"T3 done ✅", true},
		{"Done: remove the legacy writer", true},
		{"COMPLETE – T7 refunds path", true},
		{"Finished the 2019 backfill", true},
		{"Done with the EU shard", true},
		{"[x] M1 done", true},
		{"迁移已完成", true},
		{"T3 完成", true},
		{"回填部分完成。", true},
		{"已完成：T5 对账脚本", true},
		{"请求日志迁移已完成", true},
		{"别名表回填已完成", true},
		{"别在周五标记迁移完成", false},
		{"请在差异为空后再标记完成", false},
		// directives and other lines that hold the words
		{"Don't mark a migration done until the shadow-read diff is empty", false},
		{"Do not call a task complete before its tests pass", false},
		{"Never say done without the diff", false},
		{"Mark it done in the task tool, not here", false},
		{"Mark it done", false},
		{"Only the owner marks a task complete", false},
		{"Report done tasks in §5", false},
		{"A task is done when its diff is empty", false},
		{"Keep the old writer until the backfill is done", false},
		{"done", false},
		{"COMPLETE", false},
		{"Done means the diff is empty", false},
		{"Complete the backfill before the cutover", false},
		{"Use the abandoned-cart table as is", false},
		{"不要在影子读差异为空之前把迁移标记为已完成", false},
		{"标记为已完成前先跑测试", false},
		{"完成", false},
		{"回答用中文，代码注释用英文", false},
	} {
		if got := IsStatusLanguage(tc.line); got != tc.want {
			t.Errorf("IsStatusLanguage(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}
