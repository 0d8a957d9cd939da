//! Output files (statistics, profiles, device trees): checked before a run
//! and written whole or not at all.
//!
//! A run can take hours; finding at its end that the `--stats` directory
//! does not exist loses it, so [`OutputFile::check`] runs first. And a kill
//! (SIGTERM from a job scheduler) while the file is being written must not
//! leave a truncated file that looks like a result: [`OutputFile::write`]
//! writes a temporary file beside the target and renames it over the target,
//! which readers see change in one step.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// An output file that cannot be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the {what} to {}: {why}", path.display())]
pub struct OutputError {
    /// What the file holds ("stats").
    pub what: &'static str,
    /// The path as given.
    pub path: PathBuf,
    /// Why not.
    pub why: OutputProblem,
}

/// Why an output file cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputProblem {
    /// The path exists and is neither a file, a character device nor a FIFO.
    #[error("it is {0}")]
    NotAFile(&'static str),
    /// Its directory is not a directory.
    #[error("{} is not a directory", .0.display())]
    DirectoryIsNot(PathBuf),
    /// Its directory cannot be looked at.
    #[error("directory {}: {source}", dir.display())]
    Directory {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No file can be created in its directory.
    #[error("cannot create a file in {}: {source}", dir.display())]
    Create {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Any other failure of the host.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A checked output path.
#[derive(Clone, Debug)]
pub struct OutputFile {
    /// What the file holds, for messages ("stats").
    what: &'static str,
    /// The path as given, for messages.
    shown: PathBuf,
    /// Where the bytes go: the path with symbolic links resolved.
    target: PathBuf,
    /// Written in place (a character device such as `/dev/stdout`, or a
    /// FIFO), not through a temporary file.
    in_place: bool,
}

impl OutputFile {
    /// Checks that `path` can be written: an existing `path` is a regular
    /// file, a character device or a FIFO, and otherwise its directory
    /// exists and a file can be created in it.
    pub fn check(what: &'static str, path: &Path) -> Result<OutputFile, OutputError> {
        let fail = |why: OutputProblem| OutputError {
            what,
            path: path.to_path_buf(),
            why,
        };
        let (target, in_place) = match fs::metadata(path) {
            Ok(meta) => {
                let t = meta.file_type();
                let target = fs::canonicalize(path).map_err(|e| fail(e.into()))?;
                if t.is_file() {
                    (target, false)
                } else if t.is_char_device() || t.is_fifo() {
                    (target, true)
                } else {
                    return Err(fail(OutputProblem::NotAFile(
                        rvnvmm_config::files::describe(&meta),
                    )));
                }
            }
            // Absolute: a user-mode guest's chdir moves the emulator's
            // working directory.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (
                std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
                false,
            ),
            Err(e) => return Err(fail(e.into())),
        };
        let out = OutputFile {
            what,
            shown: path.to_path_buf(),
            target,
            in_place,
        };
        if !out.in_place {
            let dir = out.directory();
            match fs::metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(fail(OutputProblem::DirectoryIsNot(dir))),
                Err(source) => return Err(fail(OutputProblem::Directory { dir, source })),
            }
            // Creating the temporary file is what the write will do.
            let probe = out.temporary();
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&probe)
                .map_err(|source| fail(OutputProblem::Create { dir, source }))?;
            let _ = fs::remove_file(&probe);
        }
        Ok(out)
    }

    /// The same kind of output at `path` + `suffix` (e.g. `FILE.PID`), in
    /// the same directory.
    pub fn with_suffix(&self, suffix: &str) -> OutputFile {
        let add = |p: &Path| {
            let mut s = p.as_os_str().to_owned();
            s.push(suffix);
            PathBuf::from(s)
        };
        OutputFile {
            what: self.what,
            shown: add(&self.shown),
            target: add(&self.target),
            in_place: false,
        }
    }

    /// Writes `bytes` as the whole file, replacing it in one step.
    pub fn write(&self, bytes: &[u8]) -> Result<(), OutputError> {
        let fail = |e: std::io::Error| OutputError {
            what: self.what,
            path: self.shown.clone(),
            why: e.into(),
        };
        if self.in_place {
            return OpenOptions::new()
                .write(true)
                .open(&self.target)
                .and_then(|mut f| f.write_all(bytes))
                .map_err(fail);
        }
        let tmp = self.temporary();
        let written = (|| {
            let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            f.write_all(bytes)?;
            fs::rename(&tmp, &self.target)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written.map_err(fail)
    }

    fn directory(&self) -> PathBuf {
        match self.target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// A name beside the target, unique to this process.
    fn temporary(&self) -> PathBuf {
        let name = self
            .target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.directory()
            .join(format!(".{name}.{}.tmp", std::process::id()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rvnvmm-out-{}-{tag}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn refuses_a_missing_directory_and_a_directory_target() {
        let d = scratch("refuse");
        let e = OutputFile::check("stats", &d.join("no/such/dir/s.json")).unwrap_err();
        assert!(matches!(e.why, OutputProblem::Directory { .. }), "{e}");
        assert!(e.to_string().contains("no/such/dir"), "{e}");
        let e = OutputFile::check("stats", &d).unwrap_err();
        assert!(matches!(e.why, OutputProblem::NotAFile(_)), "{e}");
        assert!(e.to_string().contains("a directory"), "{e}");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn replaces_whole_and_leaves_nothing_else() {
        let d = scratch("replace");
        let p = d.join("s.json");
        fs::write(&p, "old contents that are longer").unwrap();
        let out = OutputFile::check("stats", &p).unwrap();
        // The check leaves the old file alone.
        assert_eq!(
            fs::read_to_string(&p).unwrap(),
            "old contents that are longer"
        );
        out.write(b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        out.with_suffix(".42").write(b"child").unwrap();
        assert_eq!(fs::read_to_string(d.join("s.json.42")).unwrap(), "child");
        let mut names: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["s.json", "s.json.42"]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn writes_through_a_symlink_and_into_a_device() {
        let d = scratch("link");
        let real = d.join("real.json");
        fs::write(&real, "x").unwrap();
        let link = d.join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        OutputFile::check("stats", &link)
            .unwrap()
            .write(b"through")
            .unwrap();
        assert_eq!(fs::read_to_string(&real).unwrap(), "through");
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        OutputFile::check("stats", Path::new("/dev/null"))
            .unwrap()
            .write(b"discarded")
            .unwrap();
        assert!(fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        fs::remove_dir_all(&d).unwrap();
    }
}
