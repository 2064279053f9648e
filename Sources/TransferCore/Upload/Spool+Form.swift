#if canImport(Glibc)
import Glibc
#endif

extension Spool {
    /// Replaces `owner`'s copy `name` (handed over, not yet submitted) with a new copy that is
    /// `form`'s body around its bytes, digested and synced, and frees the old copy. The file's
    /// bytes go from copy to copy in the kernel (`copy_file_range`); `source` names the file in
    /// messages. The old copy stays if the new one cannot be made.
    public func frame(_ name: String, owner: UInt32, in form: MultipartForm, source: String) throws(CoreError) -> Entry {
        let original = try claim(name, owner: owner)
        let input = open(path(of: name), O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            unclaim(name)
            throw CoreError(.internalFailure, "cannot reopen the spool copy of \(source): \(String(cString: strerror(errno))); hand the file over again")
        }
        defer { close(input) }
        let size = Int64(form.prefix.count) + original.size + Int64(form.suffix.count)
        let entry: Entry
        do {
            entry = try write(size, for: owner, named: source) { out, path throws(SpoolCopy.Failure) in
                try SpoolCopy.write(form.prefix, at: 0, to: out, path: path, of: source)
                return try SpoolCopy.copyAndDigest(
                    from: input, named: source, size: original.size, to: out, shift: Int64(form.prefix.count), suffix: form.suffix, path: path)
            }
        } catch {
            unclaim(name)
            throw error
        }
        release(name)
        return entry
    }
}
