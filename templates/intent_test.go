package templates

import "testing"

// TestRequestKind: seed 000 1.5's committing and inspecting requests, by their verb.
func TestRequestKind(t *testing.T) {
	for _, tc := range []struct{ request, want string }{
		{"Implement the shadow-read diff for invoice_ledger", RequestCommitting},
		{`"Fix the refund writer so it dual-writes"`, RequestCommitting},
		{"please add a --dry-run flag to the backfill", RequestCommitting},
		{"Can you migrate the 2019 invoices next?", RequestCommitting},
		{"Let's roll out 4.18 to 20%", RequestCommitting},
		{"Set up the staging ledger", RequestCommitting},
		{"Do the backfill", RequestUnsure},
		{"把 sync 命令改成先合并 notes", RequestCommitting},
		{"请修复退款写入路径", RequestCommitting},
		{"帮我迁移 2019 年的发票", RequestCommitting},
		{"List every file that writes invoice_ledger", RequestInspecting},
		{"show me the diff", RequestInspecting},
		{"Why does the backfill skip 2019?", RequestInspecting},
		{"what is the row count now", RequestInspecting},
		{"Is the shadow read on in EU?", RequestInspecting},
		{"The diff looks big?", RequestInspecting},
		{"列出所有写入 ledger 的文件", RequestInspecting},
		{"为什么回填跳过了 2019 年？", RequestInspecting},
		{"请告诉我行数", RequestInspecting},
		{"The ledger, again", RequestUnsure},
		{"addresses in the EU shard", RequestUnsure},
		{"", RequestUnsure},
	} {
		if got := RequestKind(tc.request); got != tc.want {
			t.Errorf("RequestKind(%q) = %s, want %s", tc.request, got, tc.want)
		}
	}
}
