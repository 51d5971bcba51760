/// A segmented download's plan in its task record: `total` and the segments in the order they were made, each as
/// `start`, `end` and `done`. Not checked here: ``SegmentPlan/restored(_:total:)`` checks it against the file.
extension SegmentPlan: Codable {
    enum CodingKeys: String, CodingKey {
        case total = "total"
        case segments = "segments"
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            saved: try container.decode(Int64.self, forKey: .total),
            segments: try container.decode([Segment].self, forKey: .segments)
        )
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(total, forKey: .total)
        try container.encode(segments, forKey: .segments)
    }
}

extension SegmentPlan.Segment: Codable {
    enum CodingKeys: String, CodingKey {
        case start = "start"
        case end = "end"
        case done = "done"
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            start: try container.decode(Int64.self, forKey: .start),
            end: try container.decode(Int64.self, forKey: .end),
            done: try container.decode(Int64.self, forKey: .done)
        )
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(start, forKey: .start)
        try container.encode(end, forKey: .end)
        try container.encode(done, forKey: .done)
    }
}
