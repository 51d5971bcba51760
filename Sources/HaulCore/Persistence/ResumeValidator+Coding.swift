/// A validator in a task record: the headers as sent, and whether the date is strong.
extension ResumeValidator: Codable {
    enum CodingKeys: String, CodingKey {
        case etag = "etag"
        case lastModified = "lastModified"
        case lastModifiedIsStrong = "lastModifiedIsStrong"
    }

    /// Decodes a saved validator. Records of versions before `lastModifiedIsStrong` lack it: their date counts as
    /// weak, because nothing tells whether it was at least a second before its response's `Date`. The cost is that
    /// such a task, if it has no strong entity tag, starts again from zero once; sending a weak date could splice two
    /// versions of the file.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            etag: try container.decodeIfPresent(String.self, forKey: .etag),
            lastModified: try container.decodeIfPresent(String.self, forKey: .lastModified),
            lastModifiedIsStrong: try container.decodeIfPresent(Bool.self, forKey: .lastModifiedIsStrong) ?? false
        )
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(etag, forKey: .etag)
        try container.encodeIfPresent(lastModified, forKey: .lastModified)
        try container.encode(lastModifiedIsStrong, forKey: .lastModifiedIsStrong)
    }
}
