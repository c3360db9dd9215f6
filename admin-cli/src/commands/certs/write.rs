//! Writing a set of files into a directory all or nothing, for `certs init`: every target is
//! checked before anything is written, files go to temporary names next to their targets and are
//! put in place only when all are written, and a failure leaves the directory as it was. Private
//! keys are created with mode 0600 on unix, never widened afterwards.

use std::{
    fs,
    io::{ErrorKind, Write as _},
    path::{Path, PathBuf},
};

use anyhow::{Context as _, Result, bail};

/// One file to write.
#[derive(Debug)]
pub struct NewFile {
    pub name: String,
    pub contents: Vec<u8>,
    /// A private key (or a password): mode 0600.
    pub secret: bool,
}

/// Writes the files into `dir`, all or nothing, and returns their paths. Every target is checked
/// first: anything already there (a file, a symbolic link, dangling or not) is refused unless
/// `force`, a directory always. Then each file is written under a temporary name next to its
/// target, and only when all are written are they put in place. A failure removes what this run
/// wrote and puts back what `--force` moved aside, so the directory is left as it was.
pub fn write_all(dir: &Path, files: &[NewFile], force: bool) -> Result<Vec<PathBuf>> {
    let paths: Vec<PathBuf> = files.iter().map(|f| dir.join(&f.name)).collect();
    let existing = check_targets(&paths)?;
    if !existing.is_empty() && !force {
        bail!("refusing to overwrite {} (use --force to replace them)", existing.join(", "));
    }
    let created = create_dir(dir)?;
    let mut temps = Vec::new();
    let result = stage(files, &paths, &mut temps).and_then(|()| commit(&temps, &paths, force));
    for temp in &temps {
        let _ = fs::remove_file(temp);
    }
    if result.is_err() {
        // Innermost first; remove_dir only removes an empty directory, so nothing else is lost.
        for made in created.iter().rev() {
            let _ = fs::remove_dir(made);
        }
    }
    result.map(|()| paths)
}

/// The targets that exist, described for the refusal; fails on a directory or an unreadable path.
fn check_targets(paths: &[PathBuf]) -> Result<Vec<String>> {
    let mut existing = Vec::new();
    for path in paths {
        // symlink_metadata: a symbolic link is itself what is there, wherever (or if) it points.
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => bail!("{} is a directory; move it away first", path.display()),
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default();
                existing.push(format!("{} (a symbolic link to {target:?})", path.display()));
            }
            Ok(_) => existing.push(path.display().to_string()),
            Err(err) if err.kind() == ErrorKind::NotFound => {}
            Err(err) => return Err(err).with_context(|| format!("cannot check {}", path.display())),
        }
    }
    Ok(existing)
}

/// Creates `dir` and its missing parents; returns the ones it created, outermost first.
fn create_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    let missing: Vec<PathBuf> =
        dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).map(Path::to_path_buf).collect();
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(missing.into_iter().rev().collect())
}

/// A hidden name next to `path`, unique to this process, for the file on its way to `path`.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.axctl-{}.{suffix}", std::process::id()))
}

/// Writes every file under its temporary name (private keys with mode 0600 from the start, never
/// widened afterwards); `temps` gets each temporary this run created, for the caller to remove.
fn stage(files: &[NewFile], paths: &[PathBuf], temps: &mut Vec<PathBuf>) -> Result<()> {
    for (file, path) in files.iter().zip(paths) {
        let temp = sibling(path, "tmp");
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if file.secret {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let mut out = options.open(&temp).with_context(|| format!("cannot write {}", temp.display()))?;
        temps.push(temp);
        out.write_all(&file.contents)
            .and_then(|()| out.sync_all())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Puts every temporary file at its target. With `replace`, whatever is at a target is moved aside
/// first and deleted at the end; without, a target that appeared since the check is a failure. On
/// a failure the files put in place are removed and the moved ones put back.
fn commit(temps: &[PathBuf], paths: &[PathBuf], replace: bool) -> Result<()> {
    let mut placed: Vec<&Path> = Vec::new();
    let mut moved: Vec<(PathBuf, &Path)> = Vec::new();
    for (temp, path) in temps.iter().zip(paths) {
        if let Err(err) = put(temp, path, replace, &mut placed, &mut moved) {
            for path in &placed {
                let _ = fs::remove_file(path);
            }
            for (aside, path) in &moved {
                let _ = fs::rename(aside, path);
            }
            return Err(err).with_context(|| format!("cannot write {}", path.display()));
        }
    }
    for (aside, _) in &moved {
        let _ = fs::remove_file(aside);
    }
    Ok(())
}

/// One step of [`commit`]: with `replace`, moves what is at `path` aside (recorded in `moved`),
/// then puts `temp` there (recorded in `placed`).
fn put<'a>(
    temp: &Path,
    path: &'a Path,
    replace: bool,
    placed: &mut Vec<&'a Path>,
    moved: &mut Vec<(PathBuf, &'a Path)>,
) -> std::io::Result<()> {
    if replace && fs::symlink_metadata(path).is_ok() {
        let aside = sibling(path, "old");
        fs::rename(path, &aside)?;
        moved.push((aside, path));
    }
    place(temp, path)?;
    placed.push(path);
    Ok(())
}

/// Gives the temporary file the name `path` without ever replacing what appeared there since the
/// check: a hard link fails if anything is there.
fn place(temp: &Path, path: &Path) -> std::io::Result<()> {
    match fs::hard_link(temp, path) {
        Err(err) if err.kind() != ErrorKind::AlreadyExists && fs::symlink_metadata(path).is_err() => {
            // A file system without hard links (FAT, some network mounts): rename after a last check.
            fs::rename(temp, path)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty directory of its own for a test, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(test: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!("axctl-certs-{test}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).expect("test dir");
            TempDir(dir)
        }

        /// The names in the directory, sorted.
        fn names(&self) -> Vec<String> {
            let mut names: Vec<String> = fs::read_dir(&self.0)
                .expect("read dir")
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// Four files as `generate` makes them (without the cryptography, which is not what is tested).
    fn pem_files() -> Vec<NewFile> {
        ["ca.pem", "ca.key", "server.pem", "server.key"]
            .into_iter()
            .map(|name| NewFile {
                name: name.into(),
                contents: format!("{name}\n").into_bytes(),
                secret: name.ends_with(".key"),
            })
            .collect()
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_at_one_target_is_refused_before_anything_is_written() {
        let dir = TempDir::new("dangling");
        std::os::unix::fs::symlink(dir.0.join("nowhere"), dir.0.join("server.key")).expect("symlink");
        let err = write_all(&dir.0, &pem_files(), false).expect_err("refused").to_string();
        assert!(err.contains("server.key") && err.contains("symbolic link"), "{err}");
        assert_eq!(dir.names(), ["server.key"], "nothing else was created");
        assert!(!dir.0.join("nowhere").exists());
    }

    #[cfg(unix)]
    #[test]
    fn force_replaces_a_symlink_itself_never_the_file_it_points_to() {
        let dir = TempDir::new("force-link");
        std::os::unix::fs::symlink(dir.0.join("nowhere"), dir.0.join("server.key")).expect("symlink");
        let paths = write_all(&dir.0, &pem_files(), true).expect("written");
        assert_eq!(paths.len(), 4);
        assert_eq!(dir.names(), ["ca.key", "ca.pem", "server.key", "server.pem"], "no temporaries left");
        assert!(!dir.0.join("nowhere").exists(), "nothing was written through the link");
        let meta = fs::symlink_metadata(dir.0.join("server.key")).expect("key");
        assert!(meta.file_type().is_file());
        assert_eq!(fs::read_to_string(dir.0.join("server.key")).expect("read"), "server.key\n");
    }

    #[test]
    fn a_directory_at_a_target_is_refused_even_with_force() {
        let dir = TempDir::new("directory");
        fs::create_dir(dir.0.join("ca.key")).expect("dir");
        for force in [false, true] {
            let err = write_all(&dir.0, &pem_files(), force).expect_err("refused").to_string();
            assert!(err.contains("ca.key") && err.contains("directory"), "{err}");
            assert_eq!(dir.names(), ["ca.key"]);
        }
    }

    #[test]
    fn a_target_that_appears_after_the_check_undoes_the_files_already_placed() {
        let dir = TempDir::new("race");
        let files = pem_files();
        let paths: Vec<PathBuf> = files.iter().map(|f| dir.0.join(&f.name)).collect();
        let mut temps = Vec::new();
        stage(&files, &paths, &mut temps).expect("staged");
        fs::write(dir.0.join("server.pem"), "someone else's").expect("racing file");
        let err = commit(&temps, &paths, false).expect_err("conflict").to_string();
        assert!(err.contains("server.pem"), "{err}");
        for temp in &temps {
            fs::remove_file(temp).expect("temporary still there for the caller to remove");
        }
        assert_eq!(dir.names(), ["server.pem"], "ca.pem and ca.key were taken back");
        assert_eq!(fs::read_to_string(dir.0.join("server.pem")).expect("read"), "someone else's");
    }

    #[test]
    fn a_missing_directory_is_created_and_keys_are_private() {
        let dir = TempDir::new("fresh");
        let target = dir.0.join("a").join("b");
        write_all(&target, &pem_files(), false).expect("written");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            for (name, private) in [("ca.key", true), ("server.key", true), ("ca.pem", false)] {
                let mode = fs::metadata(target.join(name)).expect("file").permissions().mode() & 0o777;
                assert_eq!(mode == 0o600, private, "{name}: {mode:o}");
            }
        }
    }
}
