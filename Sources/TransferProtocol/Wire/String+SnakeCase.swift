extension String {
    /// This Swift name in the wire's and the configuration file's snake_case:
    /// `maxConcurrentTransfers` is `max_concurrent_transfers`. Each capital starts a word.
    package var snakeCased: String {
        reduce(into: "") { result, character in
            if character.isUppercase {
                result += "_" + character.lowercased()
            } else {
                result.append(character)
            }
        }
    }
}
