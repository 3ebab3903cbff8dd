<?php

declare(strict_types=1);

namespace Pagamentos\Internal;

use Pagamentos\Exception\InvalidShapeException;

/**
 * Reads one decoded JSON object into typed values, naming the field when it holds something
 * else, so that a change in the API fails here, loudly, rather than as a TypeError elsewhere.
 * A missing nullable field reads as null: newer fields are optional to older servers.
 *
 * @internal
 */
final class Fields
{
    /** @param array<mixed> $data */
    public function __construct(private readonly array $data, private readonly string $where)
    {
    }

    /**
     * The object as decoded, for a value object's toArray().
     *
     * @return array<mixed>
     */
    public function all(): array
    {
        return $this->data;
    }

    public function string(string $key): string
    {
        $value = $this->data[$key] ?? null;
        return is_string($value) ? $value : throw $this->wrong($key, 'a string');
    }

    public function nullableString(string $key): ?string
    {
        $value = $this->data[$key] ?? null;
        return $value === null || is_string($value) ? $value : throw $this->wrong($key, 'a string or null');
    }

    public function int(string $key): int
    {
        $value = $this->data[$key] ?? null;
        return is_int($value) ? $value : throw $this->wrong($key, 'an integer');
    }

    public function nullableInt(string $key): ?int
    {
        $value = $this->data[$key] ?? null;
        return $value === null || is_int($value) ? $value : throw $this->wrong($key, 'an integer or null');
    }

    public function bool(string $key): bool
    {
        $value = $this->data[$key] ?? null;
        return is_bool($value) ? $value : throw $this->wrong($key, 'true or false');
    }

    public function dateTime(string $key): \DateTimeImmutable
    {
        return $this->nullableDateTime($key) ?? throw $this->wrong($key, 'an ISO-8601 timestamp');
    }

    public function nullableDateTime(string $key): ?\DateTimeImmutable
    {
        $value = $this->data[$key] ?? null;
        if ($value === null) {
            return null;
        }
        if (!is_string($value) || preg_match('/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/', $value) !== 1) {
            throw $this->wrong($key, 'an ISO-8601 timestamp');
        }
        try {
            return new \DateTimeImmutable($value);
        } catch (\Exception) {
            throw $this->wrong($key, 'an ISO-8601 timestamp');
        }
    }

    /**
     * A string => string map such as `metadata`; missing reads as empty.
     *
     * @return array<string, string>
     */
    public function stringMap(string $key): array
    {
        $value = $this->data[$key] ?? [];
        if (!is_array($value)) {
            throw $this->wrong($key, 'an object of strings');
        }
        $map = [];
        foreach ($value as $name => $item) {
            if (!is_string($item)) {
                throw $this->wrong($key . '.' . $name, 'a string', $item);
            }
            $map[(string) $name] = $item;
        }
        return $map;
    }

    /**
     * A nested object, as its own Fields, or null when absent or null.
     */
    public function nullableObject(string $key): ?self
    {
        $value = $this->data[$key] ?? null;
        if ($value === null) {
            return null;
        }
        return is_array($value) ? new self($value, $this->where . '.' . $key) : throw $this->wrong($key, 'an object');
    }

    public function object(string $key): self
    {
        return $this->nullableObject($key) ?? throw $this->wrong($key, 'an object');
    }

    /**
     * A list of objects.
     *
     * @return list<array<mixed>>
     */
    public function objectList(string $key): array
    {
        $value = $this->data[$key] ?? null;
        if (!is_array($value) || !array_is_list($value)) {
            throw $this->wrong($key, 'a list');
        }
        foreach ($value as $i => $item) {
            if (!is_array($item)) {
                throw $this->wrong($key . '[' . $i . ']', 'an object', $item);
            }
        }
        return $value;
    }

    /** @return array<mixed> */
    public function raw(): array
    {
        return $this->data;
    }

    /** @param mixed ...$given the value found, when it is not `$data[$key]` */
    private function wrong(string $key, string $expected, mixed ...$given): InvalidShapeException
    {
        $found = match (true) {
            $given !== [] => get_debug_type($given[0]),
            array_key_exists($key, $this->data) => get_debug_type($this->data[$key]),
            default => 'nothing',
        };
        return new InvalidShapeException(sprintf('%s.%s should be %s, got %s.', $this->where, $key, $expected, $found));
    }
}
