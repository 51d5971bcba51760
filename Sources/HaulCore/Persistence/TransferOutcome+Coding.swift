/// A completed task's outcome in its record: `{"success": {}}` or `{"failure": {"_0": <failure>}}`, the shape
/// Swift's synthesized coding gave it in the first hauld, kept so that every record saved since still loads.
extension TransferOutcome: Codable {
    enum CodingKeys: String, CodingKey {
        case success = "success"
        case failure = "failure"
    }

    /// The keys inside `success` (none) and `failure` (the failure).
    enum PayloadKeys: String, CodingKey {
        case failure = "_0"
    }

    /// Decodes an outcome: exactly one of the keys (others are ignored, as they always were).
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: container.codingPath, debugDescription: "an outcome is either success or failure")
            )
        }
        let payload = try container.nestedContainer(keyedBy: PayloadKeys.self, forKey: key)
        switch key {
        case .success: self = .success
        case .failure: self = .failure(try payload.decode(TransferFailure.self, forKey: .failure))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .success:
            _ = container.nestedContainer(keyedBy: PayloadKeys.self, forKey: .success)
        case .failure(let failure):
            var payload = container.nestedContainer(keyedBy: PayloadKeys.self, forKey: .failure)
            try payload.encode(failure, forKey: .failure)
        }
    }
}

/// A failure in a record: its kind by record name (`TaskRecordNames.swift`), `retryAfter` in seconds.
extension TransferFailure: Codable {
    enum CodingKeys: String, CodingKey {
        case kind = "kind"
        case message = "message"
        case httpStatus = "httpStatus"
        case isTransient = "isTransient"
        case retryAfter = "retryAfter"
    }

    /// The longest `retryAfter` a stored failure may hold; anything longer is corrupt (and could not be turned back
    /// into a `Duration` safely).
    static let maximumStoredRetryAfterSeconds = 1e9

    /// Decodes a failure; `retryAfter` is a number of seconds, finite and from 0 to 10⁹.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decodeRecordName(TransferErrorKind.self, forKey: .kind)
        let message = try container.decode(String.self, forKey: .message)
        let httpStatus = try container.decodeIfPresent(UInt32.self, forKey: .httpStatus)
        let isTransient = try container.decode(Bool.self, forKey: .isTransient)
        var retryAfter: Duration?
        if let seconds = try container.decodeIfPresent(Double.self, forKey: .retryAfter) {
            guard seconds.isFinite, (0...Self.maximumStoredRetryAfterSeconds).contains(seconds) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .retryAfter,
                    in: container,
                    debugDescription: "retryAfter must be from 0 to 1e9 seconds, not \(seconds)"
                )
            }
            retryAfter = .seconds(seconds)
        }
        self.init(
            kind: kind, message: message, httpStatus: httpStatus, isTransient: isTransient, retryAfter: retryAfter
        )
    }

    /// Encodes the failure, `retryAfter` as a number of seconds (clamped to 0…10⁹, so that whatever a server sent
    /// can be stored and read back).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeRecordName(kind, forKey: .kind)
        try container.encode(message, forKey: .message)
        try container.encodeIfPresent(httpStatus, forKey: .httpStatus)
        try container.encode(isTransient, forKey: .isTransient)
        let seconds = retryAfter.map { min(max($0 / .seconds(1), 0), Self.maximumStoredRetryAfterSeconds) }
        try container.encodeIfPresent(seconds, forKey: .retryAfter)
    }
}
