<?php

declare(strict_types=1);

namespace Pagamentos;

use Pagamentos\Exception\UnexpectedResponseException;

/**
 * One HTTP answer of the API, as received: every object the SDK returns keeps the one it came
 * from in `$lastResponse`, and every ApiException has it in `$response`.
 */
final class Response
{
    public readonly ?string $correlationId;
    public readonly bool $idempotentReplayed;

    /**
     * @param int $status HTTP status
     * @param array<string, list<string>> $headers names in lowercase, each with its values
     * @param string $body the raw body
     * @param string|null $idempotencyKey the Idempotency-Key the request carried (every POST has one)
     * @param int $attempts how many attempts it took (1 when there was no retry)
     */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
        public readonly ?string $idempotencyKey = null,
        public readonly int $attempts = 1,
    ) {
        $this->correlationId = $this->header('x-correlation-id');
        $this->idempotentReplayed = $this->header('idempotent-replayed') === 'true';
    }

    /** The first value of a header (any case), or null. */
    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)][0] ?? null;
    }

    /**
     * The body decoded as a JSON object.
     *
     * @return array<string, mixed>
     */
    public function json(): array
    {
        try {
            $decoded = json_decode($this->body, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        } catch (\JsonException $e) {
            throw UnexpectedResponseException::because($this, 'The API answered a body that is not JSON: '
                . $e->getMessage());
        }
        if (!is_array($decoded)) {
            throw UnexpectedResponseException::because($this, 'The API answered JSON that is not an object.');
        }
        return $decoded;
    }

    /**
     * Seconds the API asked to wait before a retry (`Retry-After`, in seconds or an HTTP date),
     * or null when it did not say.
     */
    public function retryAfterSeconds(): ?float
    {
        $value = $this->header('retry-after');
        if ($value === null || trim($value) === '') {
            return null;
        }
        $value = trim($value);
        if (is_numeric($value)) {
            return max(0.0, (float) $value);
        }
        $at = strtotime($value);
        return $at === false ? null : (float) max(0, $at - time());
    }
}
