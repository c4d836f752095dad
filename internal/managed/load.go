package managed

import (
	"fmt"
	"io"
	"sync"

	"github.com/blackpaw-studio/leo/internal/home"
)

// Loader reads the marker and prints the warning for an invalid one at most
// once, however often it is read. The process has one (Load); tests make
// their own.
type Loader struct {
	once sync.Once
}

// process is the Loader of this leo process: the CLI and the daemon it
// runs read the marker through it, so one process prints one warning.
var process Loader

// Load reads h's marker like Read and, for an invalid one, prints its
// warning on stderr unless this process already printed one.
func Load(h home.Home, p Platform, stderr io.Writer) State {
	return process.Load(h, p, stderr)
}

// Load reads h's marker and prints the warning of an invalid one on stderr
// the first time this Loader meets one.
func (l *Loader) Load(h home.Home, p Platform, stderr io.Writer) State {
	st := Read(h, p)
	if st.Status == Invalid && stderr != nil {
		l.once.Do(func() { fmt.Fprintf(stderr, "leo: warning: %s\n", st.Warning()) })
	}
	return st
}
