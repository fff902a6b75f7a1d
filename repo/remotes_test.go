package repo

import "testing"

func TestStripCredentials(t *testing.T) {
	for _, tc := range []struct{ in, clean, user, pw string }{
		{"https://bob:s3cr3t@example.com/store.git", "https://example.com/store.git", "bob", "s3cr3t"},
		{"http://bob:p%40ss@example.com:8080/x", "http://example.com:8080/x", "bob", "p@ss"},
		{"ssh://git:pw@example.com/srv/x.git", "ssh://git@example.com/srv/x.git", "git", "pw"},
		{"https://bob@example.com/x.git", "https://bob@example.com/x.git", "", ""},
		{"https://example.com/x.git", "https://example.com/x.git", "", ""},
		{"git@github.com:me/x.git", "git@github.com:me/x.git", "", ""},
		{"/srv/store.git", "/srv/store.git", "", ""},
		{"file:///srv/store.git", "file:///srv/store.git", "", ""},
	} {
		clean, user, pw := StripCredentials(tc.in)
		if clean != tc.clean || user != tc.user || pw != tc.pw {
			t.Errorf("StripCredentials(%q) = %q, %q, %q; want %q, %q, %q", tc.in, clean, user, pw, tc.clean, tc.user, tc.pw)
		}
	}
}

func TestMaskURLs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://bob:s3cr3t@example.com/x", "https://bob:***@example.com/x"},
		{"fatal: unable to access 'https://bob:s3cr3t@example.com/x/': 403", "fatal: unable to access 'https://bob:***@example.com/x/': 403"},
		{"a https://u:p@h1/ and ssh://g:q@h2/ b", "a https://u:***@h1/ and ssh://g:***@h2/ b"},
		{"https://bob@example.com/x", "https://bob@example.com/x"},
		{"https://example.com:8443/path@v2", "https://example.com:8443/path@v2"},
		{"git@github.com:me/x.git", "git@github.com:me/x.git"},
		{"no url here", "no url here"},
	} {
		if got := MaskURLs(tc.in); got != tc.want {
			t.Errorf("MaskURLs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
