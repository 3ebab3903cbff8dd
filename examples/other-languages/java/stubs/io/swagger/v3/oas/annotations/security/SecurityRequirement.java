package io.swagger.v3.oas.annotations.security;

// A stand-in for swagger-annotations (see media/Schema.java).
@java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.CLASS)
public @interface SecurityRequirement {
  String name() default "";
  String[] scopes() default {};
}
