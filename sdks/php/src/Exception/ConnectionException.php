<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * No answer from the API after every retry: the connection failed or was dropped. A POST may
 * or may not have been applied; sending it again later with the same `$idempotencyKey` is safe
 * (the API applies it at most once).
 */
class ConnectionException extends \RuntimeException implements PagamentosException
{
    /**
     * @param int $curlErrno curl's error number of the last attempt
     * @param bool $retryable whether another attempt could succeed (false for a malformed URL,
     *                        a certificate problem, ...)
     * @param int $attempts attempts made
     * @param string|null $idempotencyKey the key every attempt carried
     */
    final public function __construct(
        string $message,
        public readonly int $curlErrno,
        public readonly bool $retryable,
        public readonly int $attempts = 1,
        public readonly ?string $idempotencyKey = null,
    ) {
        parent::__construct($message);
    }

    public function withAttempts(int $attempts, ?string $idempotencyKey): static
    {
        $message = $this->getMessage();
        if ($attempts > 1) {
            $message .= sprintf(' (%d attempts)', $attempts);
        }
        if ($idempotencyKey !== null) {
            $message .= sprintf('; retry later with the same Idempotency-Key "%s"', $idempotencyKey);
        }
        return new static($message, $this->curlErrno, $this->retryable, $attempts, $idempotencyKey);
    }
}
