// Package childproc ties the programs docpipe starts (command stages,
// pdftotext, pdftoppm, tesseract, ffmpeg, pocketsphinx, the event command)
// to docpipe's own life: when docpipe dies, even by SIGKILL, which runs no
// code of ours, the kernel kills them too, so no orphan keeps working on
// (or holding) a document a later run will redo.
package childproc

import "os/exec"

// Tie makes cmd's process die with docpipe. Call it before cmd starts; it
// keeps what cmd.SysProcAttr already asks for (a process group, say).
func Tie(cmd *exec.Cmd) { tie(cmd) }
