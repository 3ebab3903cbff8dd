<?php

declare(strict_types=1);

// The tests load the SDK the way a merchant without Composer does: through init.php.
require __DIR__ . '/../init.php';

spl_autoload_register(static function (string $class): void {
    $prefix = 'Pagamentos\\Tests\\';
    if (str_starts_with($class, $prefix)) {
        $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
