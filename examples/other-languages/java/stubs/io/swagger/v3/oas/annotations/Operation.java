package io.swagger.v3.oas.annotations;

// A stand-in for swagger-annotations (see media/Schema.java).
@java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.CLASS)
public @interface Operation {
  String operationId() default "";
  String[] tags() default {};
  String summary() default "";
  String description() default "";
  io.swagger.v3.oas.annotations.responses.ApiResponse[] responses() default {};
  io.swagger.v3.oas.annotations.security.SecurityRequirement[] security() default {};
}
