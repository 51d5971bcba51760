/// `manager.json`: `{"defaultConnections": 1}`; a missing key takes the default.
extension ManagerSettings: Codable {
    enum CodingKeys: String, CodingKey {
        case defaultConnections = "defaultConnections"
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        defaultConnections = try container.decodeIfPresent(UInt32.self, forKey: .defaultConnections) ?? 1
        guard DownloadOptions.connectionRange.contains(defaultConnections) else {
            throw DecodingError.dataCorruptedError(
                forKey: .defaultConnections, in: container, debugDescription: "must be between 1 and 16"
            )
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(defaultConnections, forKey: .defaultConnections)
    }
}
